/* The "real tool" of the benchmark: does nothing, so only the cost of getting there is measured. */
int main(void) { return 0; }
