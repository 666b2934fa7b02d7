# underfed plot data: load before plots/ladder.gp
source = 'tensor_alignment.csv'
out = 'tensor_alignment_ladder'
ttl = 'tensor_alignment on NVIDIA H200: utilization ladder at the default point'
names = 'odd_vocab padded_vocab odd_hidden aligned_hidden fp32 tf32 bf16'
n = 7
data = 'data/tensor_alignment_ladder.dat'
counts = '7 7 7 7 7 7'
