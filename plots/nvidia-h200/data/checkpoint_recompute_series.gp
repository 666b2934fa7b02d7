# underfed plot data: load before plots/series.gp
source = 'checkpoint_recompute.series.csv'
out = 'checkpoint_recompute_series'
ttl = 'checkpoint_recompute on NVIDIA H200: PM-sampled counters (default point)'
data = 'data/checkpoint_recompute_series.dat'
names = 'store_all full every_k selective'
n = 4
