/* Reads a file by a relative path: it must resolve against the launcher's directory. */
#include <stdio.h>
#include <unistd.h>

int main(void)
{
    char line[128] = "", cwd[512];
    FILE *f = fopen("input.txt", "r");
    if (!f) {
        perror("fopen input.txt");
        return 1;
    }
    if (!fgets(line, sizeof line, f)) line[0] = '\0';
    fclose(f);
    printf("read %s", line);
    printf("cwd %s\n", getcwd(cwd, sizeof cwd));
    return 0;
}
