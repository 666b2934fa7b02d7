# underfed plot data: load before plots/sweep.gp
source = 'varlen_attention.csv'
out = 'varlen_attention_sweep_causal'
ttl = 'varlen_attention on NVIDIA H200: sweep of causal (other axes at their defaults)'
xname = 'causal'
logx = 0
names = 'pad_global pad_batch bucketed varlen'
n = 4
data = 'data/varlen_attention_sweep_causal.dat'
counts = '8 8'
