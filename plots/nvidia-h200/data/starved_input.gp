# underfed plot data: load before plots/starved_input.gp
source = 'starved_input.csv'
out = 'starved_input'
gpu = 'NVIDIA H200'
vnames = 'sync workers pretokenized'
n = 3
data = 'data/starved_input_workers.dat'
st_busy = '1 35.9618 5 99.8128 1 99.8042'
st_tokens = '1 9.25395e+06 5 2.28005e+07 1 2.27017e+07'
