# underfed plot data: load before plots/sweep.gp
source = 'host_sync.csv'
out = 'host_sync_sweep_host_pct'
ttl = 'host_sync on NVIDIA H200: sweep of host_pct (other axes at their defaults)'
xname = 'host_pct'
logx = 0
names = 'item sync_timing malloc_free pageable_copy deferred pool'
n = 6
data = 'data/host_sync_sweep_host_pct.dat'
counts = '24 24'
