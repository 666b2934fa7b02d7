# underfed plot data: load before plots/sweep.gp
source = 'launch_storm.csv'
out = 'launch_storm_sweep_ops'
ttl = 'launch_storm on NVIDIA H200: sweep of ops (other axes at their defaults)'
xname = 'ops'
logx = 0
names = 'eager graph fused'
n = 3
data = 'data/launch_storm_sweep_ops.dat'
counts = '6 6'
