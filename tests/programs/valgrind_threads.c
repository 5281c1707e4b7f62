// Two threads for callgrind (clone calls start_thread in the child): tests/data/valgrind/README.md.
#include <pthread.h>
static volatile long sink;
__attribute__((noinline)) long spin(int n) { long s = 0; for (int i = 0; i < n; i++) s += i; return s; }
static void* worker(void* arg) { sink += spin((int)(long)arg); return 0; }
int main(void) {
  pthread_t t[2];
  for (long i = 0; i < 2; i++) pthread_create(&t[i], 0, worker, (void*)(200000 * (i + 1)));
  for (int i = 0; i < 2; i++) pthread_join(t[i], 0);
  sink += spin(1000);
  return 0;
}
