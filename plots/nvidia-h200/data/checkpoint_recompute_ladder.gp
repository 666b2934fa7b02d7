# underfed plot data: load before plots/ladder.gp
source = 'checkpoint_recompute.csv'
out = 'checkpoint_recompute_ladder'
ttl = 'checkpoint_recompute on NVIDIA H200: utilization ladder at the default point'
names = 'store_all full every_k selective'
n = 4
data = 'data/checkpoint_recompute_ladder.dat'
counts = '4 4 4 4 4 4'
