#ifndef FERRY_APP_CMDS_H
#define FERRY_APP_CMDS_H

/* Each takes argv[0] the command as typed and returns its exit status. */
int cmd_bench(int argc, char **argv);
int cmd_recv(int argc, char **argv);
int cmd_keygen(int argc, char **argv);
int cmd_send(int argc, char **argv);
int cmd_cp(int argc, char **argv);
int cmd_version(int argc, char **argv);

#endif
