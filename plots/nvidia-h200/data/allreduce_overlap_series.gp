# underfed plot data: load before plots/series.gp
source = 'allreduce_overlap.series.csv'
out = 'allreduce_overlap_series'
ttl = 'allreduce_overlap on NVIDIA H200: PM-sampled counters (default point)'
data = 'data/allreduce_overlap_series.dat'
names = 'sequential bucketed'
n = 2
