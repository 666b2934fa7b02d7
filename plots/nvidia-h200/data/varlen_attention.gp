# underfed plot data: load before plots/varlen_attention.gp
source = 'varlen_attention.csv'
out = 'varlen_attention'
gpu = 'NVIDIA H200'
vnames = 'pad_global pad_batch bucketed varlen'
n = 4
gemm = 799.9659721
data = 'data/varlen_attention_flops.dat'
nstep = 4
nflops = 8
nrate = 16
