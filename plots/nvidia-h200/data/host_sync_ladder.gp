# underfed plot data: load before plots/ladder.gp
source = 'host_sync.csv'
out = 'host_sync_ladder'
ttl = 'host_sync on NVIDIA H200: utilization ladder at the default point'
names = 'item sync_timing malloc_free pageable_copy deferred pool'
n = 6
data = 'data/host_sync_ladder.dat'
counts = '6 6 6 6 6 6'
