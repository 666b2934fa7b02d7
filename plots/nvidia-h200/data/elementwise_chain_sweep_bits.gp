# underfed plot data: load before plots/sweep.gp
source = 'elementwise_chain.csv'
out = 'elementwise_chain_sweep_bits'
ttl = 'elementwise_chain on NVIDIA H200: sweep of bits (other axes at their defaults)'
xname = 'bits'
logx = 0
names = 'unfused fused'
n = 2
data = 'data/elementwise_chain_sweep_bits.dat'
counts = '4 4'
