# underfed plot data: load before plots/sweep.gp
source = 'starved_input.csv'
out = 'starved_input_sweep_tok_cost'
ttl = 'starved_input on NVIDIA H200: sweep of tok_cost (other axes at their defaults)'
xname = 'tok_cost'
logx = 0
names = 'sync workers pretokenized'
n = 3
data = 'data/starved_input_sweep_tok_cost.dat'
counts = '9 9'
