# The look every plot shares, loaded by each script of plots/ (`load 'lib.gp'`: render.sh puts
# plots/ on GNUPLOT_LIB): the image formats and their size and font, the colours that mean the
# same thing in every figure, and small helpers for plot commands built from the data's counts.
# Every fact about the data (names, counts, ceilings) comes from the include that
# `underfed plotdata` writes beside it (data/NAME.gp); no script runs a command.

# Each figure is drawn twice: PNG for the README, SVG beside it.
formats = "png svg"
# The commands that open FILE.png or FILE.svg of w x h pixels: eval image(fmt, w, h, file).
image(fmt, w, h, file) = fmt eq "png" ? \
  sprintf("set terminal pngcairo noenhanced size %d,%d font ',10'; set output '%s.png'", w, h, file) : \
  sprintf("set terminal svg noenhanced size %d,%d dynamic font ',10'; set output '%s.svg'", w, h, file)

# Colours: the fixed variant, the broken reference, a measured ceiling or reference level, step
# time bars, a second quantity beside the first.
c_fixed = "#009e73"
c_broken = "#d55e00"
c_ceiling = "#333333"
c_step = "#444444"
c_second = "#e69f00"

# Numbers: NaN is not equal to itself.
isnum(x) = x == x
min(a, b) = a < b ? a : b
max(a, b) = a > b ? a : b
# Plot items collected in a string, drawn with eval, so that absent data adds none.
add(list, item) = list eq "" ? item : list.", ".item
# The n-th of the counts of measured values the include lists ("k1 k2 ...").
count(counts, i) = int(word(counts, i))
# x tics at 0, 1, ... named by the words of `names`: eval name_tics(names).
name_tic(names, i) = sprintf("%s'%s' %d", i > 1 ? ", " : "", word(names, i), i - 1)
name_tics(names) = "set xtics (".sum_tics(names, words(names)).")"
sum_tics(names, n) = n < 1 ? "" : sum_tics(names, n - 1).name_tic(names, n)
# Two strings of items joined with ", ", either of them possibly empty.
join(a, b) = a eq "" ? b : b eq "" ? a : a.", ".b
# Log tics at 1, 2, 5 x 10^k between lo and hi, as plain numbers: eval "set ytics (".tics125(lo, hi).")".
tic125(v, lo, hi) = v >= lo / 1.01 && v <= hi * 1.01 ? sprintf("'%g' %g", v, v) : ""
tics125(lo, hi) = sum125(lo, hi, int(floor(log10(lo))))
sum125(lo, hi, e) = e > ceil(log10(hi)) ? "" : \
  join(join(join(tic125(10.0**e, lo, hi), tic125(2 * 10.0**e, lo, hi)), tic125(5 * 10.0**e, lo, hi)), sum125(lo, hi, e + 1))
