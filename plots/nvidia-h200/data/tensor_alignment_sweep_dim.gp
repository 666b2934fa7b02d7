# underfed plot data: load before plots/sweep.gp
source = 'tensor_alignment.csv'
out = 'tensor_alignment_sweep_dim'
ttl = 'tensor_alignment on NVIDIA H200: sweep of dim (other axes at their defaults)'
xname = 'dim'
logx = 0
names = 'odd_vocab padded_vocab odd_hidden aligned_hidden fp32 tf32 bf16'
n = 7
data = 'data/tensor_alignment_sweep_dim.dat'
counts = '39 39'
