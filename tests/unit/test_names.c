/* Interned strings (string_intern.h): one stored copy per distinct string, across table growth. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "string_intern.h"

Test(names, one_copy_per_string)
{
    uf_name_table t = {0};
    char buf[16] = "kernel_a";
    const char *a = uf_intern(&t, buf);
    cr_assert_not_null(a);
    cr_assert(a != buf, "the table keeps its own copy");
    strcpy(buf, "kernel_b");
    cr_assert_str_eq(a, "kernel_a", "the copy outlives the caller's buffer");
    const char *b = uf_intern(&t, buf);
    cr_assert(b != a);
    cr_assert(uf_intern(&t, "kernel_a") == a, "the same string gives the same pointer");
    cr_assert_null(uf_intern(&t, NULL));
    cr_assert_eq(t.count, 2);
    uf_names_free(&t);
    cr_assert_eq(t.count, 0);
    cr_assert_null(t.slots);
}

Test(names, pointers_survive_growth)
{
    uf_name_table t = {0};
    const char *first[1000];
    char name[32];
    for (int i = 0; i < 1000; i++) {
        snprintf(name, sizeof name, "name_%d", i);
        first[i] = uf_intern(&t, name);
        cr_assert_not_null(first[i]);
    }
    cr_assert_eq(t.count, 1000);
    cr_assert(2 * t.count <= t.capacity, "at most half full");
    for (int i = 0; i < 1000; i++) {
        snprintf(name, sizeof name, "name_%d", i);
        cr_assert(uf_intern(&t, name) == first[i], "%s found again after growing", name);
    }
    cr_assert_eq(t.count, 1000);
    uf_names_free(&t);
}
