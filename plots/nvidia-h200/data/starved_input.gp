# underfed plot data: load before plots/starved_input.gp
source = 'starved_input.csv'
out = 'starved_input'
gpu = 'NVIDIA H200'
vnames = 'sync workers pretokenized'
n = 3
data = 'data/starved_input_workers.dat'
st_busy = '1 24.0527 5 99.8044 1 99.8067'
st_tokens = '1 7.75382e+06 5 2.24748e+07 1 2.23786e+07'
