#ifndef FERRY_APP_CMDS_H
#define FERRY_APP_CMDS_H

int cmd_bench(int argc, char **argv);
int cmd_recv(int argc, char **argv);
int cmd_keygen(int argc, char **argv);
int cmd_send(int argc, char **argv);
int cmd_cp(int argc, char **argv);

extern const char help_bench[], help_recv[], help_keygen[], help_send[], help_cp[];

#endif
