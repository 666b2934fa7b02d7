# underfed plot data: load before plots/series.gp
source = 'launch_storm.series.csv'
out = 'launch_storm_series'
ttl = 'launch_storm on NVIDIA H200: PM-sampled counters (default point)'
data = 'data/launch_storm_series.dat'
names = 'eager graph fused'
n = 3
