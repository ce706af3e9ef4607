/* A program with a thread-local variable, for the image copy test: copies of it cannot be
 * made without ld.so (each needs a TLS module of its own), so each is dlopen'ed. */
__thread int per_thread;
int counter;

int main(int argc, char **argv)
{
    (void)argv;
    return ++per_thread + ++counter + argc;
}
