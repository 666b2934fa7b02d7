# underfed plot data: load before plots/series.gp
source = 'starved_input.series.csv'
out = 'starved_input_series'
ttl = 'starved_input on NVIDIA H200: PM-sampled counters (default point)'
data = 'data/starved_input_series.dat'
names = 'sync workers pretokenized'
n = 3
