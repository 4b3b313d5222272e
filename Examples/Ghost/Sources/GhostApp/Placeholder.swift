import Mosaic
