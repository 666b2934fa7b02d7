# underfed plot data: load before plots/sweep.gp
source = 'starved_input.csv'
out = 'starved_input_sweep_workers'
ttl = 'starved_input on NVIDIA H200: sweep of workers (other axes at their defaults)'
xname = 'workers'
logx = 1
names = 'sync workers pretokenized'
n = 3
data = 'data/starved_input_sweep_workers.dat'
counts = '7 7'
