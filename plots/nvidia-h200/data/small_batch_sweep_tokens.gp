# underfed plot data: load before plots/sweep.gp
source = 'small_batch.csv'
out = 'small_batch_sweep_tokens'
ttl = 'small_batch on NVIDIA H200: sweep of tokens (other axes at their defaults)'
xname = 'tokens'
logx = 1
names = 'micro1 accumulate large_micro one_block latency_bound wave'
n = 6
data = 'data/small_batch_sweep_tokens.dat'
counts = '48 48'
