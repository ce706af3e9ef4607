/* A module for the loader test: a global each private copy must keep to itself. */
int counter;

int bump(void);
int bump(void)
{
    return ++counter;
}

int main(int argc, char **argv)
{
    (void)argv;
    return bump() + argc;
}
