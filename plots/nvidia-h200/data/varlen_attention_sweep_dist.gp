# underfed plot data: load before plots/sweep.gp
source = 'varlen_attention.csv'
out = 'varlen_attention_sweep_dist'
ttl = 'varlen_attention on NVIDIA H200: sweep of dist (other axes at their defaults)'
xname = 'dist'
logx = 0
names = 'pad_global pad_batch bucketed varlen'
n = 4
data = 'data/varlen_attention_sweep_dist.dat'
counts = '12 12'
