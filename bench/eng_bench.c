/* eng_bench.c - being written. */
int main(void) { return 0; }
