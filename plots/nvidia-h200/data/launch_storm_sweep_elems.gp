# underfed plot data: load before plots/sweep.gp
source = 'launch_storm.csv'
out = 'launch_storm_sweep_elems'
ttl = 'launch_storm on NVIDIA H200: sweep of elems (other axes at their defaults)'
xname = 'elems'
logx = 1
names = 'eager graph fused'
n = 3
data = 'data/launch_storm_sweep_elems.dat'
counts = '24 24'
