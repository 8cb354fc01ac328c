/* The bare exec hop the gate is measured against: a program that only execs its target. */
#include <unistd.h>
#ifndef TARGET
#error "build with -DTARGET=\"/path/to/target\""
#endif
int main(int argc, char **argv) {
    (void)argc;
    argv[0] = TARGET;
    execv(TARGET, argv);
    return 127;
}
