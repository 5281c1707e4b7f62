import java.util.concurrent.*;
public class Busy {
  static volatile long sink;
  static long spin(int n) { long a = 1; for (int i = 0; i < n; i++) a = a * 1664525L + 1013904223L; return a; }
  static long workA() { return spin(200000) + 1; }
  static long workB() { return spin(100000) + 2; }
  public static void main(String[] args) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(3);
    for (int t = 0; t < 3; t++) pool.submit(() -> { while (true) { sink += workA(); sink += workB(); } });
    Thread waiter = new Thread(() -> { synchronized (Busy.class) { try { Busy.class.wait(); } catch (InterruptedException e) {} } }, "waiter-7");
    waiter.start();
    Thread sleeper = new Thread(() -> { try { Thread.sleep(1000000); } catch (InterruptedException e) {} }, "sleeper");
    sleeper.start();
    long end = System.nanoTime() + (long)(Double.parseDouble(args.length > 0 ? args[0] : "10") * 1e9);
    while (System.nanoTime() < end) sink += workB();
    System.exit(0);
  }
}
