# underfed plot data: load before plots/ladder.gp
source = 'launch_storm.csv'
out = 'launch_storm_ladder'
ttl = 'launch_storm on NVIDIA H200: utilization ladder at the default point'
names = 'eager graph fused'
n = 3
data = 'data/launch_storm_ladder.dat'
counts = '3 3 3 3 3 3'
