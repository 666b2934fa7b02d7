# underfed plot data: load before plots/starved_input.gp
source = 'starved_input.csv'
out = 'starved_input'
gpu = 'NVIDIA H200'
vnames = 'sync workers pretokenized'
n = 3
data = 'data/starved_input_workers.dat'
st_busy = '1 31.5861 5 99.808 1 99.8118'
st_tokens = '1 8.90671e+06 5 2.23805e+07 1 2.23693e+07'
