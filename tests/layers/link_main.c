/* link_main.c: the program of the layer link checks (CMakeLists.txt, LP_LAYER_CHECK): it calls
 * nothing; the layer linked whole beside it must resolve every symbol from the layers below. */
int main(void)
{
	return 0;
}
