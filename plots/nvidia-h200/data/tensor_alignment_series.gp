# underfed plot data: load before plots/series.gp
source = 'tensor_alignment.series.csv'
out = 'tensor_alignment_series'
ttl = 'tensor_alignment on NVIDIA H200: PM-sampled counters (default point)'
data = 'data/tensor_alignment_series.dat'
names = 'odd_vocab padded_vocab odd_hidden aligned_hidden fp32 tf32 bf16'
n = 7
