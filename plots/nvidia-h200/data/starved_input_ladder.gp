# underfed plot data: load before plots/ladder.gp
source = 'starved_input.csv'
out = 'starved_input_ladder'
ttl = 'starved_input on NVIDIA H200: utilization ladder at the default point'
names = 'sync workers pretokenized'
n = 3
data = 'data/starved_input_ladder.dat'
counts = '3 3 3 3 3 3'
