/*
 * massif_prog.c - deterministic allocating program with known allocation sites.
 *
 * Used by the valgrind tests (tests/e2e/valgrind_test.sh): run under massif, its heap tree
 * has known sites and sizes; run under callgrind, a known call graph. Allocation sites and
 * the bytes each holds at the peak (just before the frees at the end of main):
 *
 *   main -> build_table -> alloc_row      64 rows x 1000 bytes   = 64000
 *   main -> build_list  -> new_node       200 nodes x 48 bytes   =  9600
 *   main -> small_bits                    100 x 8 bytes          =   800
 *
 * small_bits' allocations are each well under massif's 1% threshold of the peak, but they
 * are one site: massif merges them into one tree entry (no "below threshold" entry unless
 * --threshold is raised, which the tests do to get one).
 *
 * Usage: massif_prog            (no arguments; runs a few milliseconds natively)
 *
 * Build: cc -O1 -fno-omit-frame-pointer -fno-inline -g -o massif_prog massif_prog.c
 */
#include <stdlib.h>
#include <string.h>

struct node {
    struct node *next;
    char payload[40];
};

static volatile unsigned long sink;

__attribute__((noinline)) char *alloc_row(size_t n)
{
    char *row = malloc(n);
    memset(row, 1, n);
    return row;
}

__attribute__((noinline)) char **build_table(int rows)
{
    char **table = malloc(sizeof(char *) * (size_t)rows);
    for (int i = 0; i < rows; i++) table[i] = alloc_row(1000);
    return table;
}

__attribute__((noinline)) struct node *new_node(struct node *next)
{
    struct node *n = malloc(sizeof *n);
    n->next = next;
    memset(n->payload, 2, sizeof n->payload);
    return n;
}

__attribute__((noinline)) struct node *build_list(int count)
{
    struct node *head = NULL;
    for (int i = 0; i < count; i++) head = new_node(head);
    return head;
}

__attribute__((noinline)) void **small_bits(int count)
{
    void **bits = malloc(sizeof(void *) * (size_t)count);
    for (int i = 0; i < count; i++) bits[i] = malloc(8);
    return bits;
}

int main(void)
{
    char **table = build_table(64);
    struct node *list = build_list(200);
    void **bits = small_bits(100);
    sink += (unsigned long)table[3][5] + (unsigned long)list->payload[1];
    for (int i = 0; i < 100; i++) free(bits[i]);
    free(bits);
    while (list) {
        struct node *next = list->next;
        free(list);
        list = next;
    }
    for (int i = 0; i < 64; i++) free(table[i]);
    free(table);
    return 0;
}
