# underfed plot data: load before plots/ladder.gp
source = 'elementwise_chain.csv'
out = 'elementwise_chain_ladder'
ttl = 'elementwise_chain on NVIDIA H200: utilization ladder at the default point'
names = 'unfused fused'
n = 2
data = 'data/elementwise_chain_ladder.dat'
counts = '2 2 2 2 2 2'
