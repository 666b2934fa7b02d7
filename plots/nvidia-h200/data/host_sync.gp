# underfed plot data: load before plots/host_sync.gp
source = 'host_sync.csv'
out = 'host_sync'
gpu = 'NVIDIA H200'
data = 'data/host_sync_cost.dat'
broken = 'item sync_timing malloc_free pageable_copy'
counts = '4 4 4 4 4 4'
launches = 18
gpu_step = 0.44824
