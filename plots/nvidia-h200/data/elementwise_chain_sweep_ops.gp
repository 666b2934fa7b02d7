# underfed plot data: load before plots/sweep.gp
source = 'elementwise_chain.csv'
out = 'elementwise_chain_sweep_ops'
ttl = 'elementwise_chain on NVIDIA H200: sweep of ops (other axes at their defaults)'
xname = 'ops'
logx = 1
names = 'unfused fused'
n = 2
data = 'data/elementwise_chain_sweep_ops.dat'
counts = '18 18'
