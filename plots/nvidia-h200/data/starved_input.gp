# underfed plot data: load before plots/starved_input.gp
source = 'starved_input.csv'
out = 'starved_input'
gpu = 'NVIDIA H200'
vnames = 'sync workers pretokenized'
n = 3
data = 'data/starved_input_workers.dat'
st_busy = '1 33.4645 5 99.8201 1 99.8217'
st_tokens = '1 9.33063e+06 5 2.26669e+07 1 2.2601e+07'
