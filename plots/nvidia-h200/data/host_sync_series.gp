# underfed plot data: load before plots/series.gp
source = 'host_sync.series.csv'
out = 'host_sync_series'
ttl = 'host_sync on NVIDIA H200: PM-sampled counters (default point)'
data = 'data/host_sync_series.dat'
names = 'item sync_timing malloc_free pageable_copy deferred pool'
n = 6
