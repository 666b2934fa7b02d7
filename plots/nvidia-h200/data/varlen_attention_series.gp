# underfed plot data: load before plots/series.gp
source = 'varlen_attention.series.csv'
out = 'varlen_attention_series'
ttl = 'varlen_attention on NVIDIA H200: PM-sampled counters (default point)'
data = 'data/varlen_attention_series.dat'
names = 'pad_global pad_batch bucketed varlen'
n = 4
