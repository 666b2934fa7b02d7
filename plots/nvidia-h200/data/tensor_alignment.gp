# underfed plot data: load before plots/tensor_alignment.gp
source = 'tensor_alignment.csv'
out = 'tensor_alignment'
gpu = 'NVIDIA H200'
gemm = 799.9659721
dims = 'data/tensor_alignment_dim.dat'
nsweep = 2
ndim = 34
spikes = 'data/tensor_alignment_spikes.dat'
nspike = 3
bars = 'data/tensor_alignment_bars.dat'
bnames = 'odd_vocab padded_vocab fp32 tf32 bf16'
nbar = 5
nbrate = 5
