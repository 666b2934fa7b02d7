# underfed plot data: load before plots/sweep.gp
source = 'host_sync.csv'
out = 'host_sync_sweep_launches'
ttl = 'host_sync on NVIDIA H200: sweep of launches (other axes at their defaults)'
xname = 'launches'
logx = 1
names = 'item sync_timing malloc_free pageable_copy deferred pool'
n = 6
data = 'data/host_sync_sweep_launches.dat'
counts = '12 12'
