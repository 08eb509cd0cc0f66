/* ferry rocedump: decode RoCEv2 frames in a capture and check their ICRC. */
#ifndef FERRY_APP_CMD_ROCEDUMP_H
#define FERRY_APP_CMD_ROCEDUMP_H

int cmd_rocedump(int argc, char **argv);

#endif
