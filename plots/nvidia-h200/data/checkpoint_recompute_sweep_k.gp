# underfed plot data: load before plots/sweep.gp
source = 'checkpoint_recompute.csv'
out = 'checkpoint_recompute_sweep_k'
ttl = 'checkpoint_recompute on NVIDIA H200: sweep of k (other axes at their defaults)'
xname = 'k'
logx = 0
names = 'store_all full every_k selective'
n = 4
data = 'data/checkpoint_recompute_sweep_k.dat'
counts = '6 6'
