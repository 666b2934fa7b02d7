# underfed plot data: load before plots/series.gp
source = 'small_batch.series.csv'
out = 'small_batch_series'
ttl = 'small_batch on NVIDIA H200: PM-sampled counters (default point)'
data = 'data/small_batch_series.dat'
names = 'micro1 accumulate large_micro one_block latency_bound wave'
n = 6
