# underfed plot data: load before plots/series.gp
source = 'elementwise_chain.series.csv'
out = 'elementwise_chain_series'
ttl = 'elementwise_chain on NVIDIA H200: PM-sampled counters (default point)'
data = 'data/elementwise_chain_series.dat'
names = 'unfused fused'
n = 2
