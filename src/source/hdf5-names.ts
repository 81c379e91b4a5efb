/** File names that look like HDF5 (a measurement folder usually holds logs and notes too). */
export const HDF5_NAME = /\.(h5|hdf5|hdf|nxs|emd|cxi)$/i;
