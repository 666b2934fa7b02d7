# underfed plot data: load before plots/starved_input.gp
source = 'starved_input.csv'
out = 'starved_input'
gpu = 'NVIDIA H200'
vnames = 'sync workers pretokenized'
n = 3
data = 'data/starved_input_workers.dat'
st_busy = '1 39.5439 5 99.8201 1 99.8165'
st_tokens = '1 8.80011e+06 5 2.28634e+07 1 2.27231e+07'
