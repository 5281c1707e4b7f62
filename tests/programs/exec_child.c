/*
 * exec_child.c - runs a command in a child (fork, exec) after mapping a file executable at a
 * low address of its own: `exec_child FILE COMMAND [ARG...]`.
 *
 * A child starts with its parent's maps and exec replaces them, but a recording keeps the
 * parent's beside the child's. With FILE the C library, the child's stale copy of it lies
 * below its real one: a reader that takes a library's lowest map for its load address (perf's
 * unwinders do) unwinds nothing out of the child's libc frames.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char** argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: exec_child FILE COMMAND [ARG...]\n");
        return 2;
    }
    int fd = open(argv[1], O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        perror(argv[1]);
        return 1;
    }
    /* 1 GiB: below where the kernel puts shared libraries, above a non-PIE program. */
    void* at = mmap((void*)0x40000000, (size_t)st.st_size, PROT_READ | PROT_EXEC,
                    MAP_PRIVATE | MAP_FIXED_NOREPLACE, fd, 0);
    if (at == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    close(fd);
    pid_t child = fork();
    if (child < 0) {
        perror("fork");
        return 1;
    }
    if (child == 0) {
        execv(argv[2], argv + 2);
        perror(argv[2]);
        _exit(127);
    }
    int status;
    if (waitpid(child, &status, 0) < 0) return 1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
