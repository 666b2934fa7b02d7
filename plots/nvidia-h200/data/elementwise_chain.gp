# underfed plot data: load before plots/elementwise_chain.gp
source = 'elementwise_chain.csv'
out = 'elementwise_chain'
gpu = 'NVIDIA H200'
vnames = 'unfused fused'
n = 2
has_bits = 1
copy = 4199.094562
gemm_fp32 = 50.56255011
gemm_bf16 = 799.9659721
dat32 = 'data/elementwise_chain_fp32.dat'
lab32 = 'data/elementwise_chain_labels_fp32.dat'
n32 = 18
r32 = 18
dat16 = 'data/elementwise_chain_bf16.dat'
lab16 = 'data/elementwise_chain_labels_bf16.dat'
n16 = 18
r16 = 18
